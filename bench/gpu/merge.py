#!/usr/bin/env python3
"""Print the table of one or more check_gpu.py JSON files, as one.

    merge.py A.json [B.json ...] [--expect MANIFEST.json] [--json ALL.json] [--txt ALL.txt]

bench/gpu/check.sh prints each batch's table with it (also when check_gpu.py was stopped
midway: the JSON holds every row that ended). To commit the GPU checks of several device calls
under bench/results/, merge their gpu-check.bN.json files: the rows are put together (a later
file's row replaces an earlier one for the same model, precision, kernels and check), and the
first line names the GPU, its driver and the dlc commits. Exits 1 when any row failed or the
files name different GPUs. --expect adds a failed row "not run" for every artifact of a
bench/gpu/pack.py batch manifest that no file has a row for (check_gpu.py stopped midway).

Standard library only (check_gpu.py's table, which needs NumPy only to compare).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "test", "e2e"))


def summary(table, max_failed=30):
    """Prints the first line of the table, one line per (precision, kernels, check) and the
    failed rows; returns the number of failed rows."""
    groups = {}
    for r in table.rows:
        g = groups.setdefault((r["precision"], r["kernels"], r["check"]), [0, 0, None])
        g[0] += 1
        g[1] += not r["ok"]
        v = r["value"]
        if isinstance(v, float) and (g[2] is None or v != v or v > g[2]) and g[2] == g[2]:
            g[2] = v  # NaN, once seen, stays the worst
    lines = [table.format_head(),
             "%-9s %-15s %-9s %6s %6s  %s" % ("prec", "kernels", "check", "rows", "failed",
                                             "worst")]
    for (p, k, c), (n, bad, worst) in sorted(groups.items()):
        lines.append("%-9s %-15s %-9s %6d %6d  %s" % (
            p, k, c, n, bad, "%.3g" % worst if worst is not None else "-"))
    failed = [r for r in table.rows if not r["ok"]]
    if failed:
        lines.append("failed rows%s:" % (" (the first %d)" % max_failed
                                         if len(failed) > max_failed else ""))
        lines += [table.format_row(r)[:200] for r in failed[:max_failed]]
    lines.append("%d rows, %d failed" % (len(table.rows), len(failed)))
    print("\n".join(lines), flush=True)
    return len(failed)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--expect", help="a batch manifest.json: its artifacts must have rows")
    ap.add_argument("--json", help="write the merged rows here")
    ap.add_argument("--txt", help="write the table here too")
    ap.add_argument("--summary", action="store_true",
                    help="print a summary per precision, kernels and check, and the failed "
                    "rows, instead of every row (the full table still goes to --txt)")
    args = ap.parse_args(argv)

    # The table's format is check_gpu.py's.
    import check_gpu  # noqa: E402

    docs = []
    for path in args.files:
        try:
            with open(path) as f:
                docs.append(json.load(f))
        except (OSError, ValueError) as e:
            print("merge.py: %s: %s" % (path, e), file=sys.stderr)
    if not docs:
        docs.append(check_gpu.gpu_info())
    rows = {}
    for d in docs:
        for r in d.get("rows", []):
            rows[(r["model"], r["precision"], r["kernels"], r["check"])] = r
    if args.expect:
        with open(args.expect) as f:
            manifest = json.load(f)
        for name in manifest.get("checks", []):
            model, precision, kernels = name[:-len(".dlcm")].split(".")
            if not any(k[:3] == (model, precision, kernels) for k in rows):
                rows[(model, precision, kernels, "compare")] = {
                    "model": model, "precision": precision, "kernels": kernels,
                    "check": "compare", "value": "not run", "limit": "", "ok": False,
                    "detail": "check_gpu.py ended before this artifact (see gpu-logs)"}
    gpus = sorted({(d.get("gpu", "?"), d.get("driver", ""), d.get("cuda", "")) for d in docs})
    commits = sorted({d.get("dlc_commit", "") for d in docs} - {""})
    info = {"gpu": gpus[0][0], "driver": gpus[0][1], "cuda": gpus[0][2],
            "dlc_commit": ",".join(c[:12] for c in commits)}

    class Args:
        json = None
        progress = False

    table = check_gpu.Table(Args, info)
    table.rows = sorted(rows.values(), key=lambda r: (
        r["model"], r["precision"], r["kernels"], check_gpu.CHECK_ORDER.get(r["check"], 9)))
    if args.txt:
        with open(args.txt, "w") as f:
            stdout, sys.stdout = sys.stdout, f
            try:
                table.print()
            finally:
                sys.stdout = stdout
    bad = summary(table) if args.summary else table.print()
    if args.json:
        doc = dict(info)
        doc.update({"sources": [dict((k, d.get(k)) for k in ("command", "date", "dlc_commit"))
                                for d in docs],
                    "limits_rel_l2": check_gpu.LIMITS, "rows": table.rows})
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    if len(gpus) > 1:
        print("merge.py: error: the files name different GPUs: %s" % gpus, file=sys.stderr)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
