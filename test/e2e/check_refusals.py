#!/usr/bin/env python3
"""Check that dlc refuses each file of a fixture set's refusals/ folder in one line.

    check_refusals.py --dlc BUILD/bin/dlc --dir FIXTURES/refusals

refusals.json lists {"model", "weights" (optional), "args" (optional), "message"}: `dlc inspect
MODEL [--weights W] [ARGS...]` must exit 1 with exactly one stderr line, `dlc: error: MODEL: ...` matching the message (a
regular expression searched in the line). Only the standard library.
"""

import argparse
import json
import os
import re
import subprocess
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dlc", required=True)
    ap.add_argument("--dir", required=True)
    args = ap.parse_args(argv)
    with open(os.path.join(args.dir, "refusals.json")) as f:
        cases = json.load(f)
    failed = 0
    for case in cases:
        model = os.path.join(args.dir, case["model"])
        cmd = [args.dlc, "inspect", model]
        if case.get("weights"):
            cmd += ["--weights", os.path.join(args.dir, case["weights"])]
        cmd += case.get("args", [])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        lines = p.stderr.decode(errors="replace").splitlines()
        ok = (p.returncode == 1 and len(lines) == 1
              and lines[0].startswith("dlc: error: " + model + ": ")
              and re.search(case["message"], lines[0]) is not None)
        print("%s %-24s exit %d: %s" % ("ok  " if ok else "FAIL", case["model"], p.returncode,
                                        " | ".join(lines)))
        failed += not ok
    print("%d refused as expected, %d failed" % (len(cases) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
