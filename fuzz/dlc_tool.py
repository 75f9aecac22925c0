"""What the fuzz scripts that run the `dlc` command share: their common
options and dlc's rule for a refused input.

    ap = dlc_tool.parser(__doc__)   # --dlc PATH (required), --seed N (default 1)
    args = ap.parse_args(); dlc = dlc_tool.dlc_path(args)
    problem = dlc_tool.refusal_problem(proc)   # None: exit 1, one `dlc: error:` line

Used by artifact_cli.py, concurrency.py and replay_cli.py.
"""

import argparse
import os
import shutil


def parser(doc):
    """An argument parser with --dlc (the dlc command) and --seed."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dlc", required=True, help="the dlc command (build/bin/dlc)")
    ap.add_argument("--seed", type=int, default=1, help="the random seed (default 1)")
    return ap


def dlc_path(args):
    """The --dlc command as an absolute path (the scripts change folders): a
    path as given, a bare name (`dlc`) from PATH."""
    if os.sep not in args.dlc:
        found = shutil.which(args.dlc)
        if found:
            return found
    return os.path.abspath(args.dlc)


def stderr_lines(proc):
    """A finished process's stderr (bytes or text), as lines."""
    err = proc.stderr
    if isinstance(err, bytes):
        err = err.decode(errors="replace")
    return (err or "").splitlines()


def refusal_problem(proc):
    """None when `proc` ended as dlc refuses an input (exit 1, exactly one
    line on stderr, starting `dlc: error: `); else what was wrong."""
    lines = stderr_lines(proc)
    if proc.returncode != 1:
        return f"exit status {proc.returncode}: " + " | ".join(lines[:3])[:300]
    if len(lines) != 1 or not lines[0].startswith("dlc: error: "):
        return f"{len(lines)} lines on stderr: " + " | ".join(lines[:3])[:300]
    return None
