#!/usr/bin/env python3
"""The slowest kernels of an Nsight Compute raw CSV export, as a table.

    ncu_table.py NCU.raw.csv [--top N] [--json FILE]

NCU.raw.csv is `ncu --import REPORT --page raw --csv`: a header row (ID,
Process ID, ..., Kernel Name, ..., Block Size, Grid Size, ..., then one column
per metric), a row of units, then one row per profiled kernel launch. A kernel
launched more than once (the warm-up run and the timed one) keeps its first
launch. Prints, slowest first: the kernel, its duration, the SM and memory
throughput (% of peak), DRAM throughput, the tensor pipe's active cycles
(% of peak, when profiled), achieved and theoretical occupancy, registers per
thread, block and grid, and the largest stall reason (warp cycles per issued
instruction). Columns a report lacks print as "-". --json writes the rows.
The standard library only (runs on the device machine's python3).
"""

import argparse
import csv
import json
import sys

# (column title, metric names in order of preference, format)
COLUMNS = [
    ("us", ["gpu__time_duration.sum"], "%.1f"),
    ("SM%", ["sm__throughput.avg.pct_of_peak_sustained_elapsed"], "%.0f"),
    ("mem%", ["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"], "%.0f"),
    ("dram%", ["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
               "dram__throughput.avg.pct_of_peak_sustained_elapsed"], "%.0f"),
    ("tensor%", ["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"],
     "%.0f"),
    ("occ%", ["sm__warps_active.avg.pct_of_peak_sustained_active"], "%.0f"),
    ("theo%", ["sm__maximum_warps_per_active_cycle_pct"], "%.0f"),
    ("regs", ["launch__registers_per_thread"], "%.0f"),
]
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
TIME_UNITS = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,
              "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}  # ncu 2025+ writes the short forms


def number(text):
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def read(path):
    with open(path, newline="", errors="replace") as f:
        rows = list(csv.reader(f))
    # ncu may print notes before the table: the header is the row that names the kernel.
    start = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if start is None:
        sys.exit("ncu_table.py: error: %s: no 'Kernel Name' header (not an ncu raw CSV)" % path)
    header = rows[start]
    units = {}
    body = rows[start + 1:]
    if body and body[0] and body[0][0] == "":  # the units row: no ID
        units = dict(zip(header, body[0]))
        body = body[1:]
    return header, units, [dict(zip(header, r)) for r in body if len(r) == len(header)]


def table(path, top):
    header, units, launches = read(path)
    seen, kernels = set(), []
    for launch in launches:
        key = (launch.get("Kernel Name"), launch.get("Block Size"), launch.get("Grid Size"))
        if key in seen:
            continue
        seen.add(key)
        row = {"kernel": launch.get("Kernel Name", "?"), "block": launch.get("Block Size", "-"),
               "grid": launch.get("Grid Size", "-")}
        for title, names, _ in COLUMNS:
            name = next((n for n in names if n in launch), None)
            value = number(launch[name]) if name else None
            if value is not None and title == "us":
                value *= TIME_UNITS.get(units.get(name, "usecond"), 1.0)
            row[title] = value
        stalls = [(number(v), k[len(STALL_PREFIX):-len(STALL_SUFFIX)])
                  for k, v in launch.items()
                  if k.startswith(STALL_PREFIX) and k.endswith(STALL_SUFFIX)
                  and number(v) is not None]
        stalls.sort(reverse=True)
        row["stall"] = ("%s %.1f" % (stalls[0][1], stalls[0][0])) if stalls else None
        kernels.append(row)
    kernels.sort(key=lambda r: -(r["us"] or 0))
    total = sum(r["us"] or 0 for r in kernels)
    lines = ["%d kernels, %.1f us in all (one launch each, caches flushed); the %d slowest:"
             % (len(kernels), total, min(top, len(kernels)))]
    titles = ["kernel"] + [c[0] for c in COLUMNS] + ["block", "grid", "top stall"]
    cells = []
    for r in kernels[:top]:
        line = [r["kernel"][:40]]
        for title, _, fmt in COLUMNS:
            line.append(fmt % r[title] if r[title] is not None else "-")
        line += [r["block"], r["grid"], r["stall"] or "-"]
        cells.append(line)
    widths = [max(len(str(x)) for x in col) for col in zip(titles, *cells)]
    for line in [titles] + cells:
        lines.append("  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip())
    return "\n".join(lines), kernels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--json")
    args = parser.parse_args()
    text, kernels = table(args.csv, args.top)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(kernels, f, indent=1)


if __name__ == "__main__":
    main()
